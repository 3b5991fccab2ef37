// Two counters and a hole: counters fill the lowest free bindings of their set in the
// order DXC creates them (first use in the code), here binding 1 and then binding 4.
cbuffer Params : register(b0)
{
    uint limit;
    uint3 pad;
};

RWStructuredBuffer<uint> visible : register(u2);
RWStructuredBuffer<uint> culled : register(u3);

[numthreads(32, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    if (id.x < limit)
    {
        uint i = visible.IncrementCounter();
        visible[i] = id.x;
    }
    else
    {
        uint j = culled.IncrementCounter();
        culled[j] = id.x;
    }
}
