// A counter used through a parameter: the companion counter belongs to the global declaration
// and cannot follow the buffer into the function. An error at the call.
RWStructuredBuffer<uint> queue : register(u0);

uint push(RWStructuredBuffer<uint> target, uint value)
{
    uint slot = target.IncrementCounter(); // EXPECT-ERROR
    target[slot] = value;
    return slot;
}

[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    push(queue, id.x);
}
