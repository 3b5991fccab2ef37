// Deliberately not portable: a float array and a float3 array in a constant buffer.
cbuffer Lights : register(b0)
{
    float Intensities[4];
    float3 Directions[4];
};

RWStructuredBuffer<float4> Out : register(u0);

[shader("compute")]
[numthreads(4, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID)
{
    Out[id.x] = float4(Directions[id.x] * Intensities[id.x], 1.0);
}
