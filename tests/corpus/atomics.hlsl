// Slang's Atomic<T>, the one spelling of an atomic every target can express (WGSL has atomics
// only on atomic<u32>/atomic<i32> variables, so HLSL's Interlocked* cannot be compiled for it):
// a buffer of atomics, a struct with atomic members, groupshared atomics, every method.
struct Bin
{
    Atomic<uint> Count;
    float Weight;
    Atomic<int> Delta;
};

RWStructuredBuffer<Atomic<uint>> Counters;
RWStructuredBuffer<Atomic<int>> Signed;
RWStructuredBuffer<Bin> Bins;

groupshared Atomic<uint> Local[4];

[shader("compute")]
[numthreads(64, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID, uint li : SV_GroupIndex)
{
    if (li < 4)
        Local[li].store(0u);
    GroupMemoryBarrierWithGroupSync();
    uint before = Local[li % 4].add(1u);
    Counters[0].max(id.x);
    Counters[1].min(id.x);
    Counters[2].or(1u << (id.x % 32));
    Counters[3].and(~(1u << (id.x % 32)));
    Counters[4].xor(id.x);
    uint old = Counters[5].compareExchange(0u, id.x + 1);
    uint was = Counters[6].exchange(id.x);
    Counters[7].sub(1u);
    Counters[8].increment();
    Counters[9].decrement();
    Signed[0].add(-int(id.x));
    Signed[1].min(int(id.x) - 32);
    Bins[id.x % 3].Count.add(1u);
    Bins[id.x % 3].Delta.add(int(before + old + was) - 1);
    GroupMemoryBarrierWithGroupSync();
    if (li < 4)
        Counters[10 + li].add(Local[li].load());
}
