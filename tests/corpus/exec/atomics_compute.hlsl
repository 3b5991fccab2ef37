// Execution test (SPIR-V and WGSL): counting with Slang's Atomic<T>. A histogram of Values made in
// groupshared atomics and added to Bins; a signed sum, a max and a min; a ticket per thread (the
// original value add returns); per bin, the first thread to claim it (compareExchange).
cbuffer Params
{
    uint Count;
};

struct Totals
{
    Atomic<int> Sum;
    Atomic<uint> Max;
    Atomic<uint> Min;
    Atomic<uint> Calls;
};

StructuredBuffer<uint> Values;
RWStructuredBuffer<Atomic<uint>> Bins;
RWStructuredBuffer<Totals> Total;
RWStructuredBuffer<uint> Tickets;
RWStructuredBuffer<Atomic<uint>> First;

#define BINS 8
groupshared Atomic<uint> LocalBins[BINS];

[shader("compute")]
[numthreads(64, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID, uint li : SV_GroupIndex)
{
    if (li < BINS)
        LocalBins[li].store(0u);
    GroupMemoryBarrierWithGroupSync();
    if (id.x < Count)
    {
        uint v = Values[id.x];
        LocalBins[v % BINS].add(1u);
        Total[0].Sum.add(int(v) - 50);
        Total[0].Max.max(v);
        Total[0].Min.min(v);
        Tickets[id.x] = Total[0].Calls.add(1u);
        First[v % BINS].compareExchange(0xFFFFFFFFu, id.x);
    }
    GroupMemoryBarrierWithGroupSync();
    if (li < BINS)
        Bins[li].add(LocalBins[li].load());
}
