// Post-process compute pass: a pair sampled by SampleLevel, a RW texture with an image format,
// and raw byte-address buffers.
Texture2D<float4> source : register(t0);
SamplerState sourceSampler : register(s0);

[[vk::image_format("rgba8")]]
RWTexture2D<float4> destination : register(u2);

ByteAddressBuffer exposureIn : register(t1);
RWByteAddressBuffer statsOut : register(u3);

[numthreads(8, 8, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    float2 uv = (float2(id.xy) + 0.5) / 64.0;
    float exposure = asfloat(exposureIn.Load(0));
    float4 c = source.SampleLevel(sourceSampler, uv, 0) * exposure;
    destination[id.xy] = c;
    if (id.x == 0 && id.y == 0)
    {
        statsOut.Store(0, asuint(c.r));
    }
}
