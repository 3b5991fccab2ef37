// A float array in a constant buffer: stride 16 in SPIR-V and WGSL, 4 in Metal. Not portable;
// the portable spelling is float4 Weights[2] (or a float4 per four scalars).
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
    Out[id.x] = Color * Weights[id.x % 8];
}
