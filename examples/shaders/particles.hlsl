// One explicit-Euler step of a particle system: structured buffers in and out, a constant buffer
// of parameters and a specialization constant. examples/particles.py runs it with wgpu-py and
// checks every particle against numpy.
struct Particle
{
    float4 Position; // xyz; float4 rather than float3, which Metal lays out differently
    float4 Velocity;
    float Life;
    uint Bounces;
    float2 Unused;   // explicit: Metal would end the struct at 40 bytes, SPIR-V and WGSL at 48
};

cbuffer Params
{
    float4 Gravity;
    float DeltaTime;
    float Floor;     // particles bounce off the plane y = Floor
    uint Count;
};

[[vk::constant_id(0)]] const float Drag = 0.5;

StructuredBuffer<Particle> Input;
RWStructuredBuffer<Particle> Output;

[shader("compute")]
[numthreads(64, 1, 1)]
void Step(uint3 id : SV_DispatchThreadID)
{
    uint i = id.x;
    if (i >= Count)
        return;
    Particle p = Input[i];
    p.Velocity = (p.Velocity + Gravity * DeltaTime) * (1.0 - Drag * DeltaTime);
    p.Position = p.Position + p.Velocity * DeltaTime;
    if (p.Position.y < Floor)
    {
        p.Position.y = Floor;
        p.Velocity.y = -p.Velocity.y;
        p.Bounces = p.Bounces + 1;
    }
    p.Life = p.Life - DeltaTime;
    Output[i] = p;
}
