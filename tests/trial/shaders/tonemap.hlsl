// Tone mapping post-process: exposure and white point in a push-constant block, ACES-like curve.
Texture2D<float4> HDR : register(t0);
SamplerState PointSampler : register(s1);

struct TonemapConstants
{
    float Exposure;
    float WhitePoint;
    float2 InvSize;
};

[[vk::push_constant]] TonemapConstants PC;

struct VSOut
{
    float4 Position : SV_Position;
    float2 UV : TEXCOORD0;
};

[shader("vertex")]
VSOut VSMain(uint id : SV_VertexID)
{
    VSOut o;
    o.UV = float2((id << 1) & 2, id & 2);
    o.Position = float4(o.UV * float2(2.0, -2.0) + float2(-1.0, 1.0), 0.0, 1.0);
    return o;
}

float3 reinhard(float3 c, float white)
{
    return c * (1.0 + c / (white * white)) / (1.0 + c);
}

[shader("pixel")]
float4 PSMain(VSOut i) : SV_Target0
{
    float3 hdr = HDR.Sample(PointSampler, i.UV).rgb * PC.Exposure;
    return float4(reinhard(hdr, PC.WhitePoint), 1.0);
}
