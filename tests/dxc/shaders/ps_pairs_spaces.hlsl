// Two texture+sampler pairs in two spaces, and a material cbuffer in a third space.
Texture2D baseColor : register(t1);
SamplerState baseSampler : register(s1);

Texture2D<float> shadowMap : register(t0, space1);
SamplerComparisonState shadowSampler : register(s0, space1);

cbuffer Material : register(b0, space2)
{
    float4 baseTint;
    float4 shadowParams;
};

float4 main(float4 position : SV_Position,
            float2 uv : TEXCOORD0,
            float4 shadowCoord : TEXCOORD1) : SV_Target
{
    float lit = shadowMap.SampleCmpLevelZero(shadowSampler, shadowCoord.xy, shadowCoord.z);
    float4 color = baseColor.Sample(baseSampler, uv) * baseTint;
    return float4(color.rgb * lerp(shadowParams.x, 1.0, lit), color.a);
}
