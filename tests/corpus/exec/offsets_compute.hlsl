// Execution test, built for all three targets: [[vk::offset]] (a push block whose members
// start at 64, as when the vertex stage owns bytes 0-63; a matrix placed where it is anyway)
// and the commonest constant-buffer layout, float4x4 then float3 then a scalar in the float3's
// last 4 bytes (Metal: packed_float3). The host packs both from the reflection alone.
struct PushConsts
{
    [[vk::offset(64)]] float Roughness;
    [[vk::offset(68)]] uint NumSamples;
};
[[vk::push_constant]] PushConsts Push;

cbuffer Frame
{
    [[vk::offset(0)]] float4x4 ViewProj;
    float3 LightDir;
    float Ambient;
    float3 Tint;
    uint Flags;
};

RWStructuredBuffer<float> Out;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main()
{
    Out[0] = Push.Roughness;
    Out[1] = float(Push.NumSamples);
    Out[2] = ViewProj[1][2];
    Out[3] = LightDir.y;
    Out[4] = Ambient;
    Out[5] = dot(LightDir, Tint);
    Out[6] = float(Flags);
}
