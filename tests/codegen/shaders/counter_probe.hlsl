// The generated bind group layouts include hidden counter buffers: the even ids below Count are
// appended (times 3); the odd ones are stored at the tickets of IncrementCounter.
cbuffer Params
{
    uint Count;
    uint3 Unused;
};

AppendStructuredBuffer<uint> Evens;
RWStructuredBuffer<uint> Odds;

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
}
