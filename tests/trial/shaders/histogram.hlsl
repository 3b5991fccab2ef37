// Luminance histogram: 64 bins counted in groupshared memory, then added to a byte-address buffer.
#define BINS 64

ByteAddressBuffer Values : register(t0);
RWByteAddressBuffer Histogram : register(u0);

cbuffer HistParams : register(b0)
{
    uint Count;
    float MinValue;
    float InvRange;
    uint Pad_;
};

groupshared uint LocalBins[BINS];

[shader("compute")]
[numthreads(64, 1, 1)]
void CSMain(uint3 gid : SV_DispatchThreadID, uint li : SV_GroupIndex)
{
    LocalBins[li] = 0;
    GroupMemoryBarrierWithGroupSync();
    if (gid.x < Count)
    {
        float v = asfloat(Values.Load(gid.x * 4));
        uint bin = (uint)clamp((v - MinValue) * InvRange * BINS, 0.0, BINS - 1.0);
        InterlockedAdd(LocalBins[bin], 1);
    }
    GroupMemoryBarrierWithGroupSync();
    uint ignored;
    Histogram.InterlockedAdd(li * 4, LocalBins[li], ignored);
}
