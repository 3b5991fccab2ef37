// DXC's [[vk::builtin("BaseVertex")]] and [[vk::builtin("BaseInstance")]] draw parameters:
// instanced geometry that offsets a per-instance lookup by the draw's base instance.
cbuffer Camera : register(b0)
{
    float4x4 viewProj;
};

StructuredBuffer<float4> instanceOffsets : register(t1);

struct VSOutput
{
    float4 position : SV_Position;
    float4 color : COLOR0;
};

VSOutput main(float3 position : POSITION,
              uint instance : SV_InstanceID,
              [[vk::builtin("BaseInstance")]] uint baseInstance : BASEINSTANCE,
              [[vk::builtin("BaseVertex")]] int baseVertex : BASEVERTEX)
{
    VSOutput o;
    float4 offset = instanceOffsets[instance + baseInstance];
    o.position = mul(viewProj, float4(position + offset.xyz, 1.0));
    o.color = float4(offset.www, float(baseVertex & 1));
    return o;
}
