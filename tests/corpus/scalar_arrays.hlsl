// Arrays of scalars and short vectors in a constant buffer: 16 bytes per element in SPIR-V's
// std140 and in WGSL (where Slang stores each in a vec4 slot), 4/8 bytes in Metal; so not for msl.
cbuffer Weights
{
    float W[3];
    float4 X;
    int I[2];
    uint U[2];
    float2 V[2];
    float3 T[2];
};

RWStructuredBuffer<float> Out;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    Out[id.x] = W[1] + X.x + float(I[1]) + float(U[0]) + V[1].y + T[1].z;
}
