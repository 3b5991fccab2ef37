// [[vk::counter_binding(n)]] places the counter at binding n in the buffer's own set.
struct Item
{
    float4 value;
    uint key;
    uint3 pad;
};

[[vk::counter_binding(5)]]
RWStructuredBuffer<Item> items : register(u1, space1);

cbuffer Params : register(b0, space1)
{
    uint count;
    uint3 pad2;
};

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    if (id.x < count)
    {
        uint k = items.IncrementCounter();
        items[k].key = id.x;
    }
    else
    {
        items.DecrementCounter();
    }
}
