// Multiplies Count floats by Factor, one thread each: a problem size that is not a multiple
// of the workgroup, so the dispatch must round up.
cbuffer Params
{
    float Factor;
    uint Count;
    float2 Unused;  // makes the struct 16 bytes: a smaller buffer must be refused
};

RWStructuredBuffer<float> Data;

[shader("compute")]
[numthreads(64, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    if (id.x < Count)
        Data[id.x] = Data[id.x] * Factor;
}
