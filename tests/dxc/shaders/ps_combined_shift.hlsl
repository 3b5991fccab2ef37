// [[vk::combinedImageSampler]]: with -fvk-t-shift 10 0 -fvk-s-shift 20 0, the combined
// sampler moves with its texture (t shift: binding 10), a plain sampler with the s shift.
[[vk::combinedImageSampler]]
SamplerState pairedSampler : register(s0);

[[vk::combinedImageSampler]]
Texture2D<float4> paired : register(t0);

SamplerState plainSampler : register(s0);

float4 main(float2 uv : TEXCOORD0) : SV_Target
{
    return paired.Sample(pairedSampler, uv) + paired.Sample(plainSampler, uv);
}
