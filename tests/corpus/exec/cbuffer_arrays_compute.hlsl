// Execution test (SPIR-V and WGSL): a constant buffer whose arrays of scalars and float2 take 16
// bytes per element (WGSL: Slang's vec4 slots); the host packs them by the reflection's stride.
cbuffer Params
{
    float W[3];
    float4 X;
    int I[2];
    float2 V[2];
};

RWStructuredBuffer<float> Out;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    Out[0] = W[0];
    Out[1] = W[1];
    Out[2] = W[2];
    Out[3] = X.w;
    Out[4] = float(I[1]);
    Out[5] = V[1].y;
    Out[6] = V[0].x;
}
