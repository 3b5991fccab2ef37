// Pixel inputs with [[vk::location(n)]] (matching vs_location's outputs); the SV_Target output
// has no attribute and gets its location from the semantic index, as DXC does. t1/s1 keep
// clear of vs_location's b0, so the two link into one pipeline.
Texture2D tex : register(t1);
SamplerState samp : register(s1);

struct PSInput
{
    float4 position : SV_Position;
    [[vk::location(2)]] float4 color : COLOR0;
    [[vk::location(4)]] float2 uv : TEXCOORD0;
};

float4 main(PSInput input) : SV_Target0
{
    return tex.Sample(samp, input.uv) * input.color;
}
