// No [shader] attributes: the entry points and their stages are given by the caller
// (the manifest says: main as compute).
RWStructuredBuffer<uint> Counts;

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    Counts[id.x] = id.x * 2 + 1;
}
