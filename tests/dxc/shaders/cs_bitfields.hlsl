// Bitfields: DXC starts a new 32-bit word where the type changes (uint, int, uint: three
// words) and packs same-typed neighbours into one (d and e).
struct Flags
{
    uint a : 1;
    int b : 2;
    uint c : 3;
    uint d : 4;
    uint e : 4;
};

cbuffer Params : register(b0)
{
    Flags flags;
    float4 tail;
};

RWStructuredBuffer<float4> results : register(u1);

[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    results[id.x] = tail * (flags.a + flags.b + flags.c + flags.d + flags.e);
}
