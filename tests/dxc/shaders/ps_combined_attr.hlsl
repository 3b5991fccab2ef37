// [[vk::combinedImageSampler]] on a texture and a sampler of the same register: DXC makes them
// one combined image sampler at that binding (here binding 1, set 0).
[[vk::combinedImageSampler]]
Texture2D sprite : register(t1);
[[vk::combinedImageSampler]]
SamplerState spriteSampler : register(s1);

cbuffer Fade : register(b0)
{
    float4 fade;
};

float4 main(float4 position : SV_Position, float2 uv : TEXCOORD0) : SV_Target
{
    return sprite.Sample(spriteSampler, uv) * fade;
}
