// Specialization constants: a compute scale/bias whose factor and mode are chosen at pipeline time.
[[vk::constant_id(0)]] const float Gain = 2.0;
[[vk::constant_id(1)]] const int Mode = 0;

RWStructuredBuffer<float> Data : register(u0);

[shader("compute")]
[numthreads(32, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID)
{
    float v = Data[id.x];
    Data[id.x] = (Mode == 0) ? v * Gain : v + Gain;
}
