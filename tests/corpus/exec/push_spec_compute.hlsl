// Execution test: a push-constant block (a uniform buffer at the reflection's WGSL slot; push
// constants proper on SPIR-V) and specialization constants overridden by the host through the
// ids the reflection gives.
struct PushData
{
    float4 Scale;
    uint Base;
    float Bias;
};

[[vk::push_constant]] PushData Push;

[[vk::constant_id(4)]] const float Gain = 1.0;
[[vk::constant_id(9)]] const uint Offset = 0;
[[vk::constant_id(2)]] const bool Negate = false;

RWStructuredBuffer<float4> Out;

[shader("compute")]
[numthreads(4, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    float4 v = Push.Scale * float(id.x + Push.Base + Offset) * Gain + Push.Bias;
    Out[id.x] = Negate ? -v : v;
}
