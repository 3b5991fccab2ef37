// The order DXC gives counters their bindings: an append buffer's counter is made at its
// declaration, a RW structured buffer's at the first use of its counter in the code. So with
// u3, u4 and u5 taken: events' counter is 0, late's 1 (used first), early's 2.
RWStructuredBuffer<uint> early : register(u3);
RWStructuredBuffer<uint> late : register(u4);
AppendStructuredBuffer<uint> events : register(u5);

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    uint a = late.IncrementCounter();
    late[a] = id.x;
    uint b = early.IncrementCounter();
    early[b] = id.x;
    events.Append(a + b);
}
