// Execution test, built for all three targets, run on SPIR-V and WGSL: DXC's loose globals
// ($Globals) and constant buffers that are smaller on Metal than in std140 (tail padding only:
// Small is 4 bytes on Metal and 16 in std140, Tail 24 and 32); the host sizes and packs each
// from the reflection alone.
cbuffer Small
{
    float A;
};

float4 Tint;
RWStructuredBuffer<float> Out;
float Time;

cbuffer Tail
{
    float4 P;
    float2 Q;
};

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    Out[0] = A;
    Out[1] = Tint.y;
    Out[2] = Time;
    Out[3] = P.z;
    Out[4] = Q.y;
}
