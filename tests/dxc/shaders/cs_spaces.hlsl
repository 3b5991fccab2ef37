// One resource per space, all on register number 0: four descriptor sets, binding 0 each.
cbuffer Frame : register(b0, space0)
{
    float4 time;
};

StructuredBuffer<float4> meshData : register(t0, space1);
RWStructuredBuffer<float4> skinned : register(u0, space2);

cbuffer Bones : register(b0, space3)
{
    float4x4 bones[4];
};

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    float4 p = meshData[id.x];
    skinned[id.x] = mul(bones[id.x & 3], p) + time;
}
