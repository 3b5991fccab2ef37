// An array of RW structured buffers with counters: one binding for the buffers, the next free
// one for the array of their counters (DXC: set 1, bindings 0 and 1).
RWStructuredBuffer<uint> queues[3] : register(u0, space1);

[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    uint slot = queues[id.x % 3].IncrementCounter();
    queues[id.x % 3][slot] = id.x;
}
