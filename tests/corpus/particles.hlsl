// Particle update: a RW structured buffer of structs, an append buffer (with its hidden counter),
// push constants and a specialization constant. Builds for SPIR-V and WGSL (the append buffer's
// counter a companion buffer there); Metal lays out Push.Count after a float3 differently.
struct Particle
{
    float3 Position;
    float Life;
    float3 Velocity;
    uint Flags;
};

struct PushData
{
    float DeltaTime;
    float3 Gravity;
    uint Count;
};

[[vk::push_constant]] PushData Push;

[[vk::constant_id(0)]] const uint MaxAge = 100;
[[vk::constant_id(1)]] const float Drag = 0.5;

RWStructuredBuffer<Particle> Particles;
AppendStructuredBuffer<uint> DeadList;

[shader("compute")]
[numthreads(64, 1, 1)]
void Update(uint3 id : SV_DispatchThreadID)
{
    uint i = id.x;
    if (i >= Push.Count)
        return;
    Particle p = Particles[i];
    p.Velocity += Push.Gravity * Push.DeltaTime;
    p.Velocity *= (1.0 - Drag * Push.DeltaTime);
    p.Position += p.Velocity * Push.DeltaTime;
    p.Life += Push.DeltaTime;
    if (p.Life > float(MaxAge))
    {
        p.Flags = 0;
        DeadList.Append(i);
    }
    Particles[i] = p;
}
