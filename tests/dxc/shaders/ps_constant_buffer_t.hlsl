// ConstantBuffer<T> (the templated form) next to a cbuffer block, with a pair on t2/s2.
struct Light
{
    float4 direction;
    float4 color;
};

ConstantBuffer<Light> sun : register(b3, space1);

cbuffer Surface : register(b0)
{
    float4 ambient;
};

Texture2D normalMap : register(t2);
SamplerState normalSampler : register(s2);

float4 main(float4 position : SV_Position, float2 uv : TEXCOORD0) : SV_Target
{
    float3 n = normalize(normalMap.Sample(normalSampler, uv).xyz * 2.0 - 1.0);
    float d = saturate(dot(n, -sun.direction.xyz));
    return ambient + sun.color * d;
}
