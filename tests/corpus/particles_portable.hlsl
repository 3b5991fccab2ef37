// The particle update without an append buffer, so it builds for every target: push constants,
// a specialization constant, a RW structured buffer of structs, and a read-only input buffer.
struct Particle
{
    float4 Position; // xyz, w = life
    float4 Velocity; // xyz, w unused
};

struct PushData
{
    float DeltaTime;
    uint Count;
    float2 Wind;
};

[[vk::push_constant]] PushData Push;

[[vk::constant_id(3)]] const float Damping = 0.25;
[[vk::constant_id(4)]] const bool UseWind = true;

StructuredBuffer<float4> Forces;
RWStructuredBuffer<Particle> Particles;

[shader("compute")]
[numthreads(32, 1, 1)]
void Step(uint3 id : SV_DispatchThreadID)
{
    uint i = id.x;
    if (i >= Push.Count)
        return;
    Particle p = Particles[i];
    float3 f = Forces[i].xyz;
    if (UseWind)
        f.xy += Push.Wind;
    p.Velocity.xyz = p.Velocity.xyz * (1.0 - Damping) + f * Push.DeltaTime;
    p.Position.xyz += p.Velocity.xyz * Push.DeltaTime;
    p.Position.w += Push.DeltaTime;
    Particles[i] = p;
}
