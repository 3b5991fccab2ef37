// Particle emitter: appends new particles to an AppendStructuredBuffer.
struct Particle
{
    float4 Position;   // xyz, w = age
    float4 Velocity;   // xyz, w = lifetime
};

AppendStructuredBuffer<Particle> NewParticles : register(u0);

cbuffer Emitter : register(b0)
{
    float4 Origin;
    float4 BaseVelocity;
    uint SpawnCount;
    uint Seed;
    float Lifetime;
    float Spread;
};

float hash(uint x)
{
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    return float(x) / 4294967295.0;
}

[shader("compute")]
[numthreads(64, 1, 1)]
void Emit(uint3 id : SV_DispatchThreadID)
{
    if (id.x >= SpawnCount)
        return;
    Particle p;
    p.Position = float4(Origin.xyz, 0.0);
    float3 jitter = float3(hash(id.x ^ Seed), hash(id.x * 3 + Seed), hash(id.x * 7 + Seed)) - 0.5;
    p.Velocity = float4(BaseVelocity.xyz + jitter * Spread, Lifetime);
    NewParticles.Append(p);
}
