// A derived struct in a constant buffer: its base is its first member (DXC: Offset 0, the
// derived members after it).
struct Base
{
    float4 color;
};

struct Derived : Base
{
    float4 extra;
};

cbuffer Params : register(b0)
{
    Derived material;
    float4 tail;
};

RWStructuredBuffer<float4> results : register(u1);

[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    results[id.x] = material.color + material.extra + tail;
}
