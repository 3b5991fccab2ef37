// Per-space shifts, as in DXC's manual: -fvk-t-shift 10 0 and -fvk-t-shift 20 1, with
// -fvk-s-shift 10 0 so that the pair in space 0 stays together; space 1's sampler is unshifted.
Texture2D colorTex : register(t0);
SamplerState colorSampler : register(s0);

Texture2D maskTex : register(t1, space1);
SamplerState maskSampler : register(s2, space1);

cbuffer Tint : register(b0)
{
    float4 tint;
};

float4 main(float4 position : SV_Position, float2 uv : TEXCOORD0) : SV_Target
{
    float mask = maskTex.Sample(maskSampler, uv).r;
    return colorTex.Sample(colorSampler, uv) * tint * mask;
}
