// Two attributes in one [[...]]: the binding and the counter binding both apply.
[[vk::binding(5, 3), vk::counter_binding(10)]]
RWStructuredBuffer<uint> items;

[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    uint slot = items.IncrementCounter();
    items[slot] = id.x;
}
