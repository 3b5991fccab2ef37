// 64-bit integers: SPIR-V and Metal can express them, WGSL cannot.
RWStructuredBuffer<uint64_t> Values;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    Values[id.x] = Values[id.x] * 3;
}
