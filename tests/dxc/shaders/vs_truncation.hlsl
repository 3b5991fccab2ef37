// DXC accepts an implicit truncation of the vector argument of mul() (float4 to float3, with a
// warning); Slang rejects it. The build must fail at the marked line and say what to write.
cbuffer PerObject : register(b0)
{
    float4x4 world;
    float4x4 viewProj;
};

struct VSOutput
{
    float4 position : SV_Position;
    float3 normal : NORMAL;
};

VSOutput main(float3 position : POSITION, float3 normal : NORMAL)
{
    VSOutput o;
    o.position = mul(viewProj, mul(world, float4(position, 1.0)));
    o.normal = mul((float3x3)world, float4(normal, 0.0)); // EXPECT-ERROR
    return o;
}
