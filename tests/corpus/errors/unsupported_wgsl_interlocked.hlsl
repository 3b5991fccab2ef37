// HLSL's InterlockedMax on a byte-address buffer: SPIR-V and Metal compile it; WGSL cannot (its
// min/max is signed or unsigned by the value's type: use Atomic<uint> and .max()).
RWByteAddressBuffer Histogram;

[shader("compute")]
[numthreads(64, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    uint original;
    Histogram.InterlockedMax((id.x % 16) * 4, 1, original);
}
