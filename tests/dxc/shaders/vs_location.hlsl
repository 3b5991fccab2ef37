// [[vk::location(n)]] on every vertex input and every non-built-in output.
cbuffer Camera : register(b0)
{
    float4x4 viewProj;
};

struct VSInput
{
    [[vk::location(3)]] float3 position : POSITION;
    [[vk::location(0)]] float4 color : COLOR0;
    [[vk::location(5)]] float2 uv : TEXCOORD0;
};

struct VSOutput
{
    float4 position : SV_Position;
    [[vk::location(2)]] float4 color : COLOR0;
    [[vk::location(4)]] float2 uv : TEXCOORD0;
};

VSOutput main(VSInput input)
{
    VSOutput o;
    o.position = mul(viewProj, float4(input.position, 1.0));
    o.color = input.color;
    o.uv = input.uv;
    return o;
}
