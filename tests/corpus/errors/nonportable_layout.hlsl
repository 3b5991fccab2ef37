// A float2x3 in a constant buffer: its three float2 columns are 16 bytes apart in SPIR-V and
// WGSL (std140), 8 in Metal, and no Metal matrix has that stride. Not portable; the portable
// spelling is a matrix whose columns are 4 long (float4x3, or float4x4).
cbuffer Params
{
    float4 Color;
    float2x3 Basis;
};

RWStructuredBuffer<float4> Out;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    Out[id.x] = Color * Basis[id.x % 2].x;
}
