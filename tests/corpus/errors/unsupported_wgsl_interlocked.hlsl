// HLSL's InterlockedAdd: SPIR-V and Metal compile it; WGSL cannot (use Atomic<uint> and .add()).
RWByteAddressBuffer Histogram;

[shader("compute")]
[numthreads(64, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    uint original;
    Histogram.InterlockedAdd((id.x % 16) * 4, 1, original);
}
