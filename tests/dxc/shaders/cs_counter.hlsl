// A RW structured buffer whose hidden counter is used through IncrementCounter.
// DXC puts the counter on the lowest free binding of the buffer's set (here 2).
struct Particle
{
    float4 position;
    float4 velocity;
};

RWStructuredBuffer<uint> aliveList : register(u0);
StructuredBuffer<Particle> particles : register(t1);

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    if (particles[id.x].position.w > 0.0)
    {
        uint slot = aliveList.IncrementCounter();
        aliveList[slot] = id.x;
    }
}
