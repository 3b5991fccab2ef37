// Vertex shader in DXC style: two cbuffers on b0/b1, no vk:: attributes at all.
cbuffer PerFrame : register(b0)
{
    float4x4 viewProj;
    float4 cameraPos;
};

cbuffer PerObject : register(b1)
{
    float4x4 world;
    float4 tint;
};

struct VSInput
{
    float3 position : POSITION;
    float3 normal : NORMAL;
    float2 uv : TEXCOORD0;
};

struct VSOutput
{
    float4 position : SV_Position;
    float2 uv : TEXCOORD0;
    float4 color : COLOR0;
};

VSOutput main(VSInput input)
{
    VSOutput o;
    float4 worldPos = mul(world, float4(input.position, 1.0));
    o.position = mul(viewProj, worldPos);
    o.uv = input.uv;
    float3 n = normalize(mul((float3x3)world, input.normal));
    float light = saturate(dot(n, normalize(cameraPos.xyz - worldPos.xyz)));
    o.color = tint * light;
    return o;
}
