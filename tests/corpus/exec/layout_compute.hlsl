// Execution test (SPIR-V and WGSL): the host packs Params and Items from the reflection's layout
// alone and reads Results back the same way. Exercises what std140/std430 pad: a float3 followed
// by a scalar, row- and column-major matrices, an array of structs and an array of float4 in a
// constant buffer, int/uint members, a struct element with a float3.
struct Light
{
    float4 Color;
    float3 Direction;
    float Intensity;
};

cbuffer Params
{
    row_major float3x4 Affine;
    float4x4 Transform;
    float3 Offset;
    float Gain;
    Light Lights[2];
    float4 Weights[2];
    int2 Step;
    uint Count;
    uint Mode;
};

struct Item
{
    float3 Position;
    float Mass;
    float2 Uv;
    uint Id;
    int Delta;
};

struct Result
{
    float4 Value;
    float3 Moved;
    uint Id;
    float2 Uv;
    float Lit;
    int Sum;
};

StructuredBuffer<Item> Items;
RWStructuredBuffer<Result> Results;

[shader("compute")]
[numthreads(8, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    uint i = id.x;
    if (i >= Count)
        return;
    Item it = Items[i];
    Result r;
    r.Value = mul(Transform, float4(it.Position, 1.0)) * Gain;
    r.Moved = mul(Affine, float4(it.Position, it.Mass)) + Offset;
    r.Id = it.Id * 2u + Mode;
    r.Uv = it.Uv * Weights[1].xy + Weights[0].zw;
    float lit = 0.0;
    for (uint k = 0; k < 2; k++)
        lit += Lights[k].Intensity * dot(Lights[k].Direction, it.Position) + Lights[k].Color.w;
    r.Lit = lit;
    r.Sum = it.Delta + Step.x * Step.y;
    Results[i] = r;
}
