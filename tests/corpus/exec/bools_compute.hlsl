// Bools in buffers (WGSL has none: they are uint there, 0 or 1, as SPIR-V stores them).
struct Item
{
    float value;
    bool on;
};

cbuffer Flags : register(b0)
{
    bool enabled;
    bool3 mask;
};

StructuredBuffer<Item> Items : register(t1);
RWStructuredBuffer<Item> Written : register(u2);
RWStructuredBuffer<float> Results : register(u3);

[numthreads(1, 1, 1)]
void main()
{
    Results[0] = enabled ? 1.0 : 0.0;
    Results[1] = mask.y && !mask.x ? 1.0 : 0.0;
    Results[2] = Items[1].on ? Items[1].value : -1.0;
    Results[3] = Items[0].on ? Items[0].value : -1.0;
    Item copied = Items[1];
    copied.on = !copied.on;
    Written[0] = copied;
    Written[1].on = Items[1].value > 2.0;
}
