// DXC-style explicit bindings: register() for every class, a space, vk::binding overriding a
// register, a texture and a sampler sharing a number, and a declared but unused resource.
cbuffer Camera : register(b0)
{
    float4x4 ViewProjection;
    float4 EyePosition;
};

cbuffer Material : register(b1, space1)
{
    float4 BaseColor;
    float4 Params;
};

Texture2D<float4> Albedo : register(t1);
SamplerState AlbedoSampler : register(s1);
Texture2D<float4> Unused : register(t2);
[[vk::binding(5, 0)]] Texture2D<float4> Overridden : register(t3);
StructuredBuffer<float4> Instances : register(t0, space1);
RWStructuredBuffer<float4> Feedback : register(u4);

struct VSOut
{
    float4 Position : SV_Position;
    float2 Uv : TEXCOORD0;
};

[shader("vertex")]
VSOut VS(float3 pos : POSITION, float2 uv : TEXCOORD0, uint inst : SV_InstanceID)
{
    VSOut o;
    o.Position = mul(ViewProjection, float4(pos + Instances[inst].xyz, 1.0));
    o.Uv = uv;
    return o;
}

[shader("pixel")]
float4 PS(VSOut input) : SV_Target
{
    float4 c = Albedo.Sample(AlbedoSampler, input.Uv) * BaseColor;
    c += Overridden.Sample(AlbedoSampler, input.Uv) * Params;
    Feedback[0] = c + EyePosition;
    return c;
}
