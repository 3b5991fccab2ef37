// A float array in a constant buffer: stride 16 in SPIR-V and WGSL, 4 in Metal. Metal reads
// single elements from float4s, but this one is copied whole into a local: not portable; the
// portable spelling is float4 Weights[2] (or a float4 per four scalars).
cbuffer Params
{
    float4 Color;
    float Weights[8];
};

RWStructuredBuffer<float4> Out;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    float local[8] = Weights;
    local[id.x % 8] += 1.0;
    Out[id.x] = Color * local[(id.x + 1) % 8];
}
