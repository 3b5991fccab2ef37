// A Vulkan input attachment cannot be expressed in WGSL (or Metal): an error at its declaration.
[[vk::input_attachment_index(0)]] SubpassInput inputColor;

[shader("pixel")]
float4 main() : SV_Target
{
    return inputColor.SubpassLoad();
}
