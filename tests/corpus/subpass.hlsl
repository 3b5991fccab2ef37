// SPIR-V only: Vulkan input attachments (WGSL and Metal cannot express them, OS1021). A deferred
// composition pass reads the G-buffer of the previous subpass: [[vk::input_attachment_index(i)]]
// with and without [[vk::binding]], a depth read as SubpassInput<float>, a multisampled one.
[[vk::input_attachment_index(0)]] [[vk::binding(0)]] SubpassInput inputPosition;
[[vk::input_attachment_index(1)]] [[vk::binding(1)]] SubpassInput<float4> inputNormal;
[[vk::input_attachment_index(2)]] [[vk::binding(2)]] SubpassInput inputAlbedo;
[[vk::input_attachment_index(3)]] SubpassInput<float> inputDepth;
[[vk::input_attachment_index(4)]] SubpassInputMS<float4> inputSamples;

cbuffer ubo : register(b5)
{
    float4 lightPos;
};

float4 main([[vk::location(0)]] float2 inUV : TEXCOORD0) : SV_TARGET
{
    float3 fragPos = inputPosition.SubpassLoad().rgb;
    float3 normal = inputNormal.SubpassLoad().rgb;
    float4 albedo = inputAlbedo.SubpassLoad();
    float depth = inputDepth.SubpassLoad();
    float4 resolved = (inputSamples.SubpassLoad(0) + inputSamples.SubpassLoad(1)) * 0.5;
    float3 L = normalize(lightPos.xyz - fragPos);
    return float4(albedo.rgb * max(dot(normal, L), 0.0) * depth, 1.0) + resolved * inUV.x;
}
