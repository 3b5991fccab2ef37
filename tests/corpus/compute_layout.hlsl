// A compute shader for execution tests: a constant buffer and a structured buffer of structs, both
// packed by the host from the reflection's layout alone; results written to a RW buffer.
// float4 rather than float3 in buffers: a scalar after a float3 sits at a different offset on Metal.
cbuffer Params
{
    float4 Scale;
    float4 Bias;
    uint Count;
    uint Pad0;
    float4x4 Transform;
    int2 Step;
    float Weight;
    uint Mode;
    float2 Pad1;
};

struct Item
{
    float4 Position; // xyz, w = mass
    float2 Uv;
    uint Id;
    float Pad;
};

struct Result
{
    float4 Value;
    uint Id;
    float Dot;
    float2 Uv;
};

StructuredBuffer<Item> Items;
RWStructuredBuffer<Result> Results;

[shader("compute")]
[numthreads(16, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    uint i = id.x;
    if (i >= Count)
        return;
    Item it = Items[i];
    float4 p = mul(Transform, float4(it.Position.xyz, 1.0));
    Result r;
    r.Value = p * Scale + float4(Bias.xyz, it.Position.w);
    r.Id = it.Id + Mode;
    r.Dot = dot(it.Position.xyz, Bias.xyz) * Weight + float(Step.x - Step.y);
    r.Uv = it.Uv * Weight;
    Results[i] = r;
}
