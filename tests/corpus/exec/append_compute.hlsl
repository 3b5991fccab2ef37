// Counters run for real: the even thread ids appended to an append buffer, the odd ones stored
// at the tickets of a RW structured buffer's IncrementCounter, and the first Take threads
// consuming from a pre-filled consume buffer (its counter set by the host to the items in it).
cbuffer Params
{
    uint Count;
    uint Take;
};

AppendStructuredBuffer<uint> Evens;
RWStructuredBuffer<uint> Odds;
ConsumeStructuredBuffer<uint> Pool;
RWStructuredBuffer<uint> Taken;

[shader("compute")]
[numthreads(64, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    if (id.x >= Count)
        return;
    if (id.x % 2 == 0)
    {
        Evens.Append(id.x * 3);
    }
    else
    {
        uint ticket = Odds.IncrementCounter();
        Odds[ticket] = id.x;
    }
    if (id.x < Take)
        Taken[id.x] = Pool.Consume();
}
