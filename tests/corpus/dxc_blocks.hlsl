// DXC-era Vulkan code names a constant buffer after the one struct it holds:
// `cbuffer ubo { UBO ubo; }`, then `ubo.projection`. Also a block whose plain member has its
// name, a push-constant block of the same form, and ConstantBuffer<T> beside them.
struct UBO
{
    float4x4 projection;
    float4x4 model;
    float4 tint;
};

cbuffer ubo : register(b0) { UBO ubo; }

cbuffer fog : register(b1) { float4 fog; }

struct Material
{
    float4 albedo;
};

ConstantBuffer<Material> material : register(b2);

struct PushConsts
{
    float4 offset;
};

[[vk::push_constant]] cbuffer pushConsts { PushConsts pushConsts; }

struct VSOutput
{
    float4 Pos : SV_POSITION;
    [[vk::location(0)]] float4 Color : COLOR0;
};

[shader("vertex")]
VSOutput VSMain([[vk::location(0)]] float3 Pos : POSITION0)
{
    VSOutput output;
    float4 world = mul(ubo.model, float4(Pos, 1.0)) + pushConsts.offset;
    output.Pos = mul(ubo.projection, world);
    output.Color = ubo.tint;
    return output;
}

[shader("pixel")]
float4 PSMain(VSOutput input) : SV_TARGET
{
    return input.Color * material.albedo + fog;
}
