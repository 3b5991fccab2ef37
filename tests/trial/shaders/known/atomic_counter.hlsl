// Slang's own atomic type, what a WGSL user would try after InterlockedAdd is refused (E36107).
RWStructuredBuffer<Atomic<uint>> Counters : register(u0);

[shader("compute")]
[numthreads(64, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID)
{
    Counters[id.x % 4].add(1u);
}
