// Deliberately not portable: a float array in a constant buffer passed whole to a function.
cbuffer Lights : register(b0)
{
    float Intensities[4];
    float3 Directions[4];
};

RWStructuredBuffer<float4> Out : register(u0);

float Total(float values[4], uint count)
{
    float sum = 0;
    for (uint i = 0; i < count; i++)
        sum += values[i];
    return sum;
}

[shader("compute")]
[numthreads(4, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID)
{
    Out[id.x] = float4(Directions[id.x] * Total(Intensities, id.x), 1.0);
}
