// A compute shader for execution tests: a constant buffer and a structured buffer of structs, both
// packed by the host from the reflection's layout alone; results written to a RW buffer.
cbuffer Params
{
    float4 Scale;
    float3 Bias;
    uint Count;
    float4x4 Transform;
    int2 Step;
    float Weight;
    uint Mode;
};

struct Item
{
    float3 Position;
    float Mass;
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
    float4 p = mul(Transform, float4(it.Position, 1.0));
    Result r;
    r.Value = p * Scale + float4(Bias, it.Mass);
    r.Id = it.Id + Mode;
    r.Dot = dot(it.Position, Bias) * Weight + float(Step.x - Step.y);
    r.Uv = it.Uv * Weight;
    Results[i] = r;
}
