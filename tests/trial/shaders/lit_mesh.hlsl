// Lit mesh: per-frame and per-object constant buffers, a directional light, a shadow map sampled
// with a comparison sampler, and an albedo texture array.
cbuffer PerFrame : register(b0)
{
    float4x4 ViewProj;
    float4x4 LightViewProj;
    float3 LightDir;      // towards the light, normalized
    float Ambient;
    float4 LightColor;
};

cbuffer PerObject : register(b1)
{
    float4x4 World;
    float3x3 NormalMatrix;
    uint Layer;
    float3 Pad_;
};

Texture2DArray<float4> Albedo : register(t0);
Texture2D<float> ShadowMap : register(t1);
SamplerState LinearSampler : register(s2);
SamplerComparisonState ShadowSampler : register(s3);

struct VSIn
{
    float3 Position : POSITION;
    float3 Normal : NORMAL;
    float2 UV : TEXCOORD0;
};

struct VSOut
{
    float4 Position : SV_Position;
    float3 Normal : NORMAL;
    float2 UV : TEXCOORD0;
    float4 ShadowPos : TEXCOORD1;
};

[shader("vertex")]
VSOut VSMain(VSIn v)
{
    VSOut o;
    float4 world = mul(World, float4(v.Position, 1.0));
    o.Position = mul(ViewProj, world);
    o.Normal = mul(NormalMatrix, v.Normal);
    o.UV = v.UV;
    o.ShadowPos = mul(LightViewProj, world);
    return o;
}

[shader("pixel")]
float4 PSMain(VSOut i) : SV_Target0
{
    float3 n = normalize(i.Normal);
    float ndl = saturate(dot(n, LightDir));
    float3 sp = i.ShadowPos.xyz / i.ShadowPos.w;
    float2 suv = sp.xy * float2(0.5, -0.5) + 0.5;
    float lit = ShadowMap.SampleCmpLevelZero(ShadowSampler, suv, sp.z);
    float4 albedo = Albedo.Sample(LinearSampler, float3(i.UV, (float)Layer));
    return float4(albedo.rgb * (Ambient + ndl * lit * LightColor.rgb), albedo.a);
}
